/// FNV-1a, 64 bits: a stable digest of a short text (unlike `Hasher`, the same in every run),
/// for names and fingerprints, not for security.
public enum FNV1a {
    public static func hash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
        return hash
    }
}
