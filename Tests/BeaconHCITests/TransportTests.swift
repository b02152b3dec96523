import BeaconHCI
import BeaconKit
import Foundation
import BeaconTesting
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct TransportTests {
    @Test func serialSpecsParse() throws {
        #expect(try ControllerEndpoint.parseSerial("/dev/ttyACM0") == .serial(path: "/dev/ttyACM0", baud: 1_000_000, flowControl: true))
        #expect(try ControllerEndpoint.parseSerial("/dev/ttyUSB1@115200,noflow") == .serial(path: "/dev/ttyUSB1", baud: 115_200, flowControl: false))
        #expect(throws: HCITransportError.self) { try ControllerEndpoint.parseSerial("/dev/ttyACM0@fast") }
        #expect(try ControllerEndpoint.parseDevice("hci1") == .device(index: 1))
        #expect(throws: HCITransportError.self) { try ControllerEndpoint.parseDevice("bluetooth") }
    }

    @Test func hciSocketErrorsSayWhatToDo() throws {
        let probe = socket(31, Int32(SOCK_RAW.rawValue), 1)
        let kernelHasBluetooth = probe >= 0 || errno != EAFNOSUPPORT
        if probe >= 0 { close(probe) }
        do {
            let transport = try ControllerEndpoint.device(index: 250).open()
            transport.close()
            Issue.record("hci250 should not exist")
        } catch let error as HCITransportError {
            #expect(error.transport == "hci250")
            if kernelHasBluetooth {
                #expect(error.message.contains("cannot open the HCI socket"))
            } else {
                #expect(error.message.contains("EAFNOSUPPORT"))
                #expect(error.message.contains("--h4 PATH"))
                #expect(error.message.contains("--serial"))
            }
        }
    }

    @Test func missingUnixSocketIsNamed() {
        do {
            _ = try ControllerEndpoint.h4Socket(path: "/nonexistent/h4").open()
            Issue.record("connect must fail")
        } catch {
            #expect("\(error)".contains("cannot connect to /nonexistent/h4"))
        }
    }

    /// A pseudo-terminal stands in for a UART: the device side is configured raw at 1 Mbit/s and
    /// an H4 Command Complete written on the controller side, split in two, reaches the host.
    @Test func serialTransportReadsH4FromATerminal() async throws {
        let terminal = try PseudoTerminal()
        let transport = try ControllerEndpoint.serial(path: terminal.devicePath, baud: 1_000_000, flowControl: false).open()
        let host = HostController(transport: transport, defaultTimeout: .seconds(10))
        let reply = Task { try await host.send(HCICommand(opcode: .reset)) }
        #expect(terminal.read(count: 4) == [0x01, 0x03, 0x0C, 0x00], "raw mode must pass the command bytes unchanged")
        terminal.write([0x04, 0x0E, 0x04])
        // Waits on the pseudo-terminal delivering the first half alone, so the host reads it split.
        try await Task.sleep(for: .milliseconds(20))
        terminal.write([0x01, 0x03, 0x0C, 0x00])
        #expect(try await reply.value.opcode == .reset)
        await host.close()
    }

    @Test func unsupportedBaudIsExplained() throws {
        let terminal = try PseudoTerminal()
        do {
            _ = try ControllerEndpoint.serial(path: terminal.devicePath, baud: 12345, flowControl: false).open()
            Issue.record("12345 baud is not a termios rate")
        } catch {
            #expect("\(error)".contains("baud rate 12345"))
        }
    }
}
