import Foundation
import SQLKit

/// Reading columns with errors that name the column, whatever the backend's integer widths.
extension SQLRow {
    func int(_ column: String) throws -> Int { try decode(column: column, as: Int.self) }
    func optionalInt(_ column: String) throws -> Int? { try decode(column: column, as: Int?.self) }
    func double(_ column: String) throws -> Double { try decode(column: column, as: Double.self) }
    func optionalDouble(_ column: String) throws -> Double? { try decode(column: column, as: Double?.self) }
    func string(_ column: String) throws -> String { try decode(column: column, as: String.self) }
    func optionalString(_ column: String) throws -> String? { try decode(column: column, as: String?.self) }
    func uuid(_ column: String) throws -> UUID {
        let text = try string(column)
        guard let uuid = UUID(uuidString: text) else {
            throw RegistryError(.invalid, field: column, "stored value '\(text)' is not a UUID")
        }
        return uuid
    }
    func uint16(_ column: String) throws -> UInt16 {
        let value = try int(column)
        guard let number = UInt16(exactly: value) else {
            throw RegistryError(.invalid, field: column, "stored value \(value) does not fit in 16 bits")
        }
        return number
    }
}
