import BeaconKit

/// A site's survey taken on the server: an operator holds a tag (or a phone that posts its own
/// sightings) still at a known spot, and what the site hears of it for some seconds becomes one
/// scan, kept until the operator saves the finished scans into the map (`tagSurvey` for a tag,
/// `survey` for a phone) or discards them. Saving is a separate step because each new map
/// version starts the site's tracker afresh (calibration included), which should happen once
/// per walk, not once per spot.
///
/// A value driven by the sightings' own times, as ``SiteTracker`` is: a recording starts at the
/// site's clock (its latest sighting) when it is asked for, lasts its seconds of that clock, and
/// is finished once the clock is ``settle`` seconds past its end, so batches of gateways that
/// post later still count. Memory is bounded: at most ``maximumRecordings`` recordings a site,
/// each with one sum per map receiver or fixed beacon.
public struct SurveyRecorder: Sendable {
    public enum Kind: String, Sendable, Codable {
        /// A carried beacon heard by the map's placed gateways: a scan of `tagSurvey`.
        case tag
        /// A phone (a gateway that is not among the map's receivers) hearing the map's fixed
        /// beacons: a scan of `survey`.
        case phone
    }

    public enum Status: String, Sendable, Codable {
        /// Asked for before the site heard anything: starts with the site's next sighting.
        case waiting
        case recording
        /// Heard: ready to be saved into the map.
        case finished
        /// Nothing was heard in its window (``Recording/reason`` says what).
        case failed
    }

    public struct Recording: Sendable, Codable, Hashable {
        public var id: Int
        /// `UUID:major:minor` for a tag, the gateway's name for a phone.
        public var subject: String
        public var kind: Kind
        public var position: Position
        public var seconds: Double
        /// Gateway time of the window, once it started.
        public var start: Double?
        public var end: Double?
        public var status: Status
        /// Mean RSSI (dBm) per gateway (tag) or per fixed beacon by its map name (phone).
        public var readings: [String: Double]
        public var packets: Int
        /// A tag's advertised power at 1 m (the mean of its frames'), which the scan carries.
        public var measuredPower: Double?
        public var reason: String?
    }

    /// `GET /v1/sites/{id}/survey-recordings`.
    public struct Listing: Sendable, Codable {
        public var siteID: Int
        /// The site's clock: the latest sighting time this instance has seen since recording began.
        public var clock: Double?
        public var recordings: [Recording]

        public init(siteID: Int, clock: Double?, recordings: [Recording]) {
            self.siteID = siteID
            self.clock = clock
            self.recordings = recordings
        }
    }

    /// `POST /v1/sites/{id}/survey-recordings/save`.
    public struct Saved: Sendable, Codable {
        public var siteID: Int
        public var mapVersion: Int
        /// Scans added to the map's `tagSurvey` and `survey`.
        public var tagSurvey: Int
        public var survey: Int
        /// Finished recordings whose every reading named a receiver or beacon the map no longer has.
        public var dropped: Int

        public init(siteID: Int, mapVersion: Int, tagSurvey: Int, survey: Int, dropped: Int) {
            self.siteID = siteID
            self.mapVersion = mapVersion
            self.tagSurvey = tagSurvey
            self.survey = survey
            self.dropped = dropped
        }
    }

    /// Recordings a site keeps, whatever their state, until saved or discarded.
    public static let maximumRecordings = 64
    /// Seconds of gateway time after a window's end before it is finished.
    public static let settle = 2.0
    public static let allowedSeconds = 1.0...120.0

    public private(set) var recordings: [Recording] = []
    /// The site's clock: the latest usable sighting time seen.
    public private(set) var clock: Double?
    private var nextID = 1
    private var subjects: [Int: TrackedSubject] = [:]
    private var sums: [Int: [String: (sum: Double, count: Int)]] = [:]
    private var powers: [Int: (sum: Double, count: Int)] = [:]
    private var placedReceivers: Set<String> = []
    private var fixedBeacons: [BeaconIdentity: String] = [:]

    /// `clock`: the site's clock so far (its tracker's latest sighting time), if known.
    public init(map: SiteMap, clock: Double? = nil) {
        self.clock = clock
        adopt(map)
    }

    /// Follows a new version of the map: who counts as a gateway with a place and as a fixed beacon.
    public mutating func adopt(_ map: SiteMap) {
        placedReceivers = Set(map.receivers.filter { $0.position != nil }.map(\.name))
        fixedBeacons = [:]
        for beacon in map.beacons {
            if let identity = beacon.identity, fixedBeacons[identity] == nil { fixedBeacons[identity] = beacon.id }
        }
    }

    public enum Refusal: Error, Equatable {
        case full
        case seconds
    }

    /// Starts recording `subject` at `position`; the caller has checked that the subject and the
    /// spot belong to the site's map.
    public mutating func begin(_ subject: TrackedSubject, at position: Position, seconds: Double) throws(Refusal) -> Recording {
        guard recordings.count < Self.maximumRecordings else { throw .full }
        guard Self.allowedSeconds.contains(seconds) else { throw .seconds }
        let kind: Kind = if case .phone = subject { .phone } else { .tag }
        var recording = Recording(id: nextID, subject: subject.name, kind: kind, position: position, seconds: seconds,
                                  status: .waiting, readings: [:], packets: 0)
        subjects[recording.id] = subject
        nextID += 1
        if let clock {
            recording.start = clock
            recording.end = clock + seconds
            recording.status = .recording
        }
        recordings.append(recording)
        return recording
    }

    /// Feeds one gateway's batch: the site's clock moves, and the packets of recorded subjects
    /// inside their windows are summed.
    public mutating func receive(_ sightings: [Sighting], gateway: String) {
        var earliest: Double?
        for sighting in sightings where SiteTracker.isUsable(sighting.time) {
            if clock.map({ sighting.time > $0 }) ?? true { clock = sighting.time }
            if earliest.map({ sighting.time < $0 }) ?? true { earliest = sighting.time }
        }
        guard let clock, !recordings.isEmpty else { return }
        // A recording asked for before the site's first sighting starts with the batch that brings one.
        for index in recordings.indices where recordings[index].status == .waiting {
            let start = earliest ?? clock
            recordings[index].start = start
            recordings[index].end = start + recordings[index].seconds
            recordings[index].status = .recording
        }
        // Which open recordings each packet can belong to, looked up once per packet: a tag's by
        // its identity when the gateway has a place, a phone's by the gateway posting.
        var openTags: [BeaconIdentity: [Int]] = [:]
        var openPhone: [Int] = []
        for index in recordings.indices where recordings[index].status == .recording {
            switch subjects[recordings[index].id] {
            case .beacon(let identity)?: openTags[identity, default: []].append(index)
            case .phone(let name)? where name == gateway: openPhone.append(index)
            default: break
            }
        }
        if !placedReceivers.contains(gateway) { openTags = [:] }
        if !openTags.isEmpty || !openPhone.isEmpty {
            for sighting in sightings {
                guard let rssi = sighting.rssi, let frame = sighting.frame.iBeacon, SiteTracker.isUsable(sighting.time) else { continue }
                let phoneReceiver = openPhone.isEmpty ? nil : fixedBeacons[frame.identity]
                for index in (openTags[frame.identity] ?? []) + (phoneReceiver == nil ? [] : openPhone) {
                    guard let start = recordings[index].start, let end = recordings[index].end, (start...end).contains(sighting.time) else { continue }
                    let id = recordings[index].id
                    let receiver = recordings[index].kind == .tag ? gateway : phoneReceiver!
                    sums[id, default: [:]][receiver, default: (0, 0)].sum += Double(rssi)
                    sums[id]![receiver]!.count += 1
                    if recordings[index].kind == .tag, frame.measuredPower.isUsableForDistance {
                        powers[id, default: (0, 0)].sum += Double(frame.measuredPower.dBm)
                        powers[id]!.count += 1
                    }
                }
            }
        }
        finish(at: clock)
    }

    private mutating func finish(at clock: Double) {
        for index in recordings.indices {
            guard recordings[index].status == .recording, let end = recordings[index].end, clock >= end + Self.settle else { continue }
            let id = recordings[index].id
            subjects[id] = nil
            let heard = sums.removeValue(forKey: id) ?? [:]
            let power = powers.removeValue(forKey: id)
            recordings[index].readings = heard.mapValues { ($0.sum / Double($0.count) * 10).rounded() / 10 }
            recordings[index].packets = heard.values.reduce(0) { $0 + $1.count }
            recordings[index].measuredPower = power.map { ($0.sum / Double($0.count) * 10).rounded() / 10 }
            if heard.isEmpty {
                recordings[index].status = .failed
                recordings[index].reason = recordings[index].kind == .tag
                    ? "no gateway with a place on the map heard \(recordings[index].subject) in its window"
                    : "\(recordings[index].subject) reported none of the map's fixed beacons in its window"
            } else {
                recordings[index].status = .finished
            }
        }
    }

    /// Removes a recording; false when there is none with that id.
    public mutating func discard(_ id: Int) -> Bool {
        guard let index = recordings.firstIndex(where: { $0.id == id }) else { return false }
        recordings.remove(at: index)
        subjects[id] = nil
        sums[id] = nil
        powers[id] = nil
        return true
    }

    /// Takes the finished recordings out, for saving into the map.
    public mutating func takeFinished() -> [Recording] {
        let finished = recordings.filter { $0.status == .finished }
        recordings.removeAll { $0.status == .finished }
        return finished
    }

    /// Puts recordings taken out back (a save that failed), in id order.
    public mutating func restore(_ taken: [Recording]) {
        recordings = (recordings + taken).sorted { $0.id < $1.id }
    }
}
