import ArgumentParser
import BeaconGateway
import BeaconKit

// The library's named settings, read from the command line with the library's own spelling.
// The exit rule also takes any number of seconds, so its options parse it with
// `ExitRuleChoice(parsing:)`, whose error says what was expected.

extension InputFormat: ExpressibleByArgument {}
extension GatewayUploader.UploadFormat: ExpressibleByArgument {}
extension RSSIFilterChoice: ExpressibleByArgument {}
extension DistanceModelChoice: ExpressibleByArgument {}
