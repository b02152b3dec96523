// Users of the server see the batch type the gateways post, without importing the gateway
// module themselves: it is one type, shared, not a copy.
@_exported import struct BeaconGateway.SightingBatch
