import BeaconKit
import Foundation

/// Output helpers shared by the engine commands.
enum Terminal {
    static var isInteractive: Bool { isatty(STDOUT_FILENO) == 1 }

    /// Clears the screen and moves the cursor home (ANSI), so a table redraws in place.
    static let clear = "\u{1B}[H\u{1B}[2J"

    static func timestamp(_ time: Double) -> String { TimeDisplay.string(time) }

    static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : text + String(repeating: " ", count: width - text.count)
    }
}
