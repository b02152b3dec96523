@testable import BeaconGateway
import Testing

@Suite struct LaneScheduleTests {
    /// Receivers post in turn, a quarter slice apart, each once per slice, in time order.
    @Test func staggersReceiversWithinASlice() {
        var schedule = LaneSchedule(lanes: [("a", 0), ("b", 2.5), ("c", 5), ("d", 7.5)], slice: 10)
        var posts: [String] = []
        while let name = schedule.nextDue(before: 21) { posts.append(name) }
        #expect(posts == ["b", "c", "d", "a", "b", "c", "d", "a"])
        #expect(schedule.nextDue(before: 22) == nil)
        #expect(schedule.nextDue(before: 22.5) == "b")
        var drained: [String] = []
        while let name = schedule.nextDue(before: .infinity, draining: true) { drained.append(name) }
        #expect(drained.sorted() == ["a", "b", "c", "d"])
    }
}
