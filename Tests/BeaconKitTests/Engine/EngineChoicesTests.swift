import Testing
@testable import BeaconKit

/// The words a person types for the filter, the distance model and the exit rule: one spelling
/// each, read back as written, and errors that say what was expected.
@Suite struct EngineChoicesTests {
    @Test(arguments: [("kalman", RSSIFilter.default), ("trimmed-mean", .altBeaconRunningAverage),
                      ("ARMA", .altBeaconARMA), ("none", .none)])
    func filterNames(text: String, filter: RSSIFilter) throws {
        let choice = try RSSIFilterChoice(parsing: text)
        #expect(choice.filter == filter)
        #expect(RSSIFilterChoice(choice.description) == choice)
    }

    @Test(arguments: [("robust", DistanceModel.robust(RobustRangingParameters(pathLossExponent: 2.7))),
                      ("log-distance", DistanceModel.logDistance(pathLossExponent: 2.7)), ("altbeacon", .altBeaconDefault),
                      ("nexus4", .curveFit(.nexus4)), ("bleacon", .bleacon)])
    func distanceModelNames(text: String, model: DistanceModel) throws {
        let choice = try DistanceModelChoice(parsing: text)
        #expect(choice.model(pathLossExponent: 2.7) == model)
        #expect(DistanceModelChoice(choice.description) == choice)
    }

    @Test(arguments: [("evidence", ExitRule.default), ("adaptive", .adaptiveDefault), ("altbeacon", .altBeacon), ("iOS", .iOSLike),
                      ("12.5", .fixedDelay(seconds: 12.5))])
    func exitRuleNames(text: String, rule: ExitRule) throws {
        let choice = try ExitRuleChoice(parsing: text)
        #expect(choice.rule == rule)
        #expect(ExitRuleChoice(choice.description) == choice)
    }

    @Test func fixedDelayIsNilOnlyForTheAdaptiveRule() throws {
        #expect(try ExitRuleChoice(parsing: "adaptive").fixedDelay == nil)
        #expect(try ExitRuleChoice(parsing: "evidence").fixedDelay == nil)
        #expect(try ExitRuleChoice(parsing: "ios").fixedDelay == 30)
        #expect(try ExitRuleChoice(parsing: "7").fixedDelay == 7)
    }

    @Test(arguments: ["0", "-3", "nan", "inf", "soon", ""])
    func exitRuleRefusals(text: String) {
        #expect(throws: ChoiceError(setting: "exit rule", expected: "evidence, adaptive, altbeacon, ios or a positive number of seconds",
                                    found: text)) { try ExitRuleChoice(parsing: text) }
    }

    @Test func refusalsListTheAcceptedNames() {
        #expect(throws: ChoiceError(setting: "RSSI filter", expected: "kalman, trimmed-mean, arma or none", found: "median")) {
            try RSSIFilterChoice(parsing: "median")
        }
        #expect(throws: ChoiceError(setting: "distance model", expected: "robust, log-distance, altbeacon, nexus4 or bleacon", found: "friis")) {
            try DistanceModelChoice(parsing: "friis")
        }
        #expect(ChoiceError(setting: "exit rule", expected: "x", found: "y").description == "exit rule: expected x, found 'y'")
    }
}
