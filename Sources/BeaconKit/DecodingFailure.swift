import Foundation

/// Turns a `DecodingError` into the field it happened at and what was wrong, for example
/// ("sightings[12].frame.major", "expected an integer, found another JSON type"). The server's
/// 400 answers and the regions file's errors both say where the input went wrong this way.
public enum DecodingFailure {
    /// - Parameter root: the name used when the error is about the whole document.
    public static func describe(_ error: DecodingError, root: String = "body") -> (field: String, reason: String) {
        func path(_ codingPath: [any CodingKey]) -> String {
            var text = ""
            for key in codingPath {
                if let index = key.intValue {
                    text += "[\(index)]"
                } else {
                    text += text.isEmpty ? key.stringValue : ".\(key.stringValue)"
                }
            }
            return text.isEmpty ? root : text
        }
        switch error {
        case .keyNotFound(let key, let context):
            return (path(context.codingPath + [key]), "required field is missing")
        case .typeMismatch(let type, let context):
            return (path(context.codingPath), "expected \(describe(type: type)), found another JSON type")
        case .valueNotFound(let type, let context):
            return (path(context.codingPath), "expected \(describe(type: type)), found null")
        case .dataCorrupted(let context):
            if context.codingPath.isEmpty {
                return (root, "not valid JSON")
            }
            return (path(context.codingPath), context.debugDescription.replacingOccurrences(of: "Number ", with: "found ")
                .replacingOccurrences(of: " is not representable in Swift.", with: ", which is out of range for the field"))
        @unknown default:
            return (root, "could not be decoded")
        }
    }

    /// A JSON reader's name for a Swift type: "a string", "an integer".
    public static func describe(type: Any.Type) -> String {
        switch type {
        case is String.Type: "a string"
        case is Double.Type, is Float.Type: "a number"
        case is Int.Type, is Int8.Type, is UInt16.Type, is Int64.Type, is UInt8.Type, is UInt32.Type: "an integer"
        case is Bool.Type: "true or false"
        case is [Sighting].Type: "an array of sightings"
        default: "\(type)"
        }
    }
}
