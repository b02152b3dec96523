import Foundation

extension KeyedDecodingContainer {
    /// An optional field that may be left out but not sent as `null`. openapi.yaml documents
    /// such a field as its type alone, so a `null` breaks the schema; `decodeIfPresent` would
    /// read it as absent and take a request the document refuses. The error names the field.
    func decodeOmittable<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard contains(key) else { return nil }
        if try decodeNil(forKey: key) {
            throw DecodingError.valueNotFound(T.self, DecodingError.Context(
                codingPath: codingPath + [key], debugDescription: "expected a value or the field left out, found null"))
        }
        return try decode(T.self, forKey: key)
    }
}
