import Foundation

extension EvaluationReport {
    /// An SVG with two panels: RSSI over time for one receiver–beacon pair with the default
    /// filter's output and the true mean, and the cumulative distribution of ranging error for
    /// each configuration that ranges.
    public var svg: String {
        let width = 900.0, panelHeight = 300.0, margin = 60.0
        var parts: [String] = []
        parts.append(##"<svg xmlns="http://www.w3.org/2000/svg" width="\##(Int(width))" height="\##(Int(2 * panelHeight + 3 * margin))" font-family="sans-serif" font-size="12">"##)
        parts.append(##"<rect width="100%" height="100%" fill="white"/>"##)

        // Panel 1: RSSI over time.
        let top = margin
        let samples = trace.samples
        let times = samples.map(\.time), values = samples.flatMap { [$0.rssi, $0.filtered, $0.trueMean] }
        let t0 = times.min() ?? 0, t1 = max((times.max() ?? 1), t0 + 1)
        let v0 = ((values.min() ?? -100) / 5).rounded(.down) * 5, v1 = max(((values.max() ?? -40) / 5).rounded(.up) * 5, v0 + 5)
        let plotWidth = width - 2 * margin
        func x(_ t: Double) -> Double { margin + (t - t0) / (t1 - t0) * plotWidth }
        func y(_ v: Double) -> Double { top + (v1 - v) / (v1 - v0) * panelHeight }
        parts.append(##"<text x="\##(margin)" y="\##(top - 20)" font-size="14">RSSI of \##(escape(trace.beacon)) at \##(escape(trace.receiver)): packets (grey), default Kalman filter (blue), true mean without shadowing (green)</text>"##)
        parts += axes(x0: margin, y0: top, width: plotWidth, height: panelHeight,
                      xTicks: ticks(t0, t1).map { (x($0), format($0, 0) + " s") },
                      yTicks: ticks(v0, v1).map { (y($0), format($0, 0) + " dBm") })
        for sample in samples {
            parts.append(##"<circle cx="\##(format(x(sample.time), 1))" cy="\##(format(y(sample.rssi), 1))" r="1.3" fill="#999"/>"##)
        }
        parts.append(polyline(samples.map { (x($0.time), y($0.trueMean)) }, colour: "#2a2", width: 1.5))
        parts.append(polyline(samples.map { (x($0.time), y($0.filtered)) }, colour: "#14c", width: 2))

        // Panel 2: error CDFs.
        let top2 = 2 * margin + panelHeight
        let maxError = 10.0
        func x2(_ e: Double) -> Double { margin + min(e, maxError) / maxError * plotWidth }
        func y2(_ p: Double) -> Double { top2 + (1 - p) * panelHeight }
        parts.append(##"<text x="\##(margin)" y="\##(top2 - 20)" font-size="14">Ranging error CDF: |accuracy − true distance| per configuration</text>"##)
        parts += axes(x0: margin, y0: top2, width: plotWidth, height: panelHeight,
                      xTicks: stride(from: 0.0, through: maxError, by: 1).map { (x2($0), format($0, 0) + " m") },
                      yTicks: stride(from: 0.0, through: 1, by: 0.25).map { (y2($0), format($0, 2)) })
        let colours = ["#14c", "#c41", "#2a2", "#a3a", "#e90", "#099", "#555", "#b58"]
        var legendY = top2 + 15
        for (index, variant) in variants.enumerated() {
            guard let ranging = variant.ranging, !ranging.sortedErrors.isEmpty else { continue }
            let errors = ranging.sortedErrors
            let step = max(1, errors.count / 400)
            var points: [(Double, Double)] = [(x2(0), y2(0))]
            for i in stride(from: 0, to: errors.count, by: step) { points.append((x2(errors[i]), y2(Double(i + 1) / Double(errors.count)))) }
            points.append((x2(errors[errors.count - 1]), y2(1)))
            let colour = colours[index % colours.count]
            parts.append(polyline(points, colour: colour, width: 1.8))
            parts.append(##"<line x1="\##(width - margin - 260)" y1="\##(legendY - 4)" x2="\##(width - margin - 240)" y2="\##(legendY - 4)" stroke="\##(colour)" stroke-width="2"/>"##)
            parts.append(##"<text x="\##(width - margin - 235)" y="\##(legendY)">\##(escape(variant.name))</text>"##)
            legendY += 15
        }
        parts.append("</svg>")
        return parts.joined(separator: "\n") + "\n"
    }

    private func axes(x0: Double, y0: Double, width: Double, height: Double,
                      xTicks: [(Double, String)], yTicks: [(Double, String)]) -> [String] {
        var parts = [##"<rect x="\##(x0)" y="\##(y0)" width="\##(width)" height="\##(height)" fill="none" stroke="#000"/>"##]
        for (position, label) in xTicks {
            parts.append(##"<line x1="\##(format(position, 1))" y1="\##(y0 + height)" x2="\##(format(position, 1))" y2="\##(y0 + height + 5)" stroke="#000"/>"##)
            parts.append(##"<text x="\##(format(position, 1))" y="\##(y0 + height + 18)" text-anchor="middle">\##(label)</text>"##)
        }
        for (position, label) in yTicks {
            parts.append(##"<line x1="\##(x0 - 5)" y1="\##(format(position, 1))" x2="\##(x0 + width)" y2="\##(format(position, 1))" stroke="#ddd"/>"##)
            parts.append(##"<text x="\##(x0 - 8)" y="\##(format(position + 4, 1))" text-anchor="end">\##(label)</text>"##)
        }
        return parts
    }

    private func polyline(_ points: [(Double, Double)], colour: String, width: Double) -> String {
        let list = points.map { "\(format($0.0, 1)),\(format($0.1, 1))" }.joined(separator: " ")
        return ##"<polyline points="\##(list)" fill="none" stroke="\##(colour)" stroke-width="\##(width)"/>"##
    }

    /// About six round tick values between two bounds.
    private func ticks(_ low: Double, _ high: Double) -> [Double] {
        let raw = (high - low) / 6
        let magnitude = pow(10, floor(log10(max(raw, 1e-9))))
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? raw
        return stride(from: (low / step).rounded(.up) * step, through: high, by: step).map { $0 }
    }

    private func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;").replacingOccurrences(of: ">", with: "&gt;")
    }
}
