#!/usr/bin/env bash
# Builds one fuzz target with libFuzzer and AddressSanitizer and runs it.
#   Fuzz/run.sh [TARGET] [libFuzzer options]
#   Fuzz/run.sh                        # decoders, 10 million executions
#   Fuzz/run.sh hci -max_total_time=60 # any libFuzzer options replace -runs=10000000
#   FUZZ_BUILD_ONLY=1 Fuzz/run.sh csv  # build only
# Targets (harness Fuzz/Fuzz*.swift, seeds Fuzz/corpus-TARGET, dictionary Fuzz/TARGET.dict):
#   decoders  BeaconKit's decoders (seeds in Fuzz/corpus)
#   mqtt      BeaconMQTT's packet decoder
#   hci       BeaconHCI's H4 framer and HCI event parsing (commands, Command Complete/Status,
#             LE advertising reports into sightings)
#   capture   BeaconHCI's btsnoop and pcap readers, and replaying what they read
#   scenario  the simulator's scenario JSON and BeaconLocate's site-map JSON
#   batch     the server's sighting batches: JSON and application/vnd.proxima.sightings.v1
#   csv       the CSV imports: RFC 4180 reading and writing, the directory and site-plan CSVs,
#             and `proxima locate`'s beacon and scan tables
#
# How it builds: swiftc straight from the source files, no SwiftPM, so a run does not rebuild
# the package with the sanitizers. Each module a target needs (BeaconKit's values and codec,
# BeaconLocate, ...) is compiled to one object with `-sanitize=fuzzer,address -wmo -c` and its
# .swiftmodule; the module under test is compiled last together with the harness, so the
# harness reaches internal API, and linked with libFuzzer's main (`-parse-as-library`, entry
# `@_cdecl("LLVMFuzzerTestOneInput")`). Only dependency-free files are used: code that needs
# NIO, Hummingbird or SQLKit is kept out of the files fuzzed (see docs/reliability.md#fuzzing).
#
# Every run: -timeout=1 (one input taking ≥ 1 s is a hang), -rss_limit_mb=2048, leak
# detection on. New inputs go to Fuzz/corpus-TARGET-run, crashes to Fuzz/out/TARGET-*.
set -euo pipefail

# All in one function, so bash has read the whole script before it runs: editing the script
# during a long run cannot change what that run does.
main() {
  cd "$(dirname "$0")/.."

  target=decoders
  case "${1:-}" in
    decoders|mqtt|hci|capture|scenario|batch|csv) target=$1; shift ;;
    -*|"") ;;
    *) echo "Fuzz/run.sh: unknown target '$1' (decoders, mqtt, hci, capture, scenario, batch, csv)" >&2; exit 2 ;;
  esac

  out=Fuzz/out/$target
  # Dependency modules, kept between runs and shared by the targets.
  libs=Fuzz/out/modules
  mkdir -p "$out" "$libs"
  swift_flags=(-sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6 -I "$libs")

  # Compiles a dependency module to one instrumented object and its interface, unless the
  # object is newer than its sources (after changing the flags here, delete Fuzz/out).
  library() {
    local name=$1; shift
    objects+=("$libs/$name.o")
    if [ -f "$libs/$name.o" ] && [ -z "$(find "$@" -newer "$libs/$name.o" | head -1)" ]; then return; fi
    swiftc "${swift_flags[@]}" -wmo -module-name "$name" -emit-module -emit-module-path "$libs/$name.swiftmodule" \
      -c "$@" -o "$libs/$name.o"
  }
  objects=()

  # swift-crypto's Crypto module and objects from `swift build` (built here when missing).
  swift_crypto() {
    local debug=.build/debug
    [ -f "$debug/Modules/Crypto.swiftmodule" ] || swift build --target BeaconRotation >&2
    swift_flags+=(-I "$debug/Modules")
    while IFS= read -r object; do objects+=("$object"); done < <(find -L "$debug/Crypto.build" "$debug/CryptoBoringWrapper.build" \
      "$debug/CCryptoBoringSSL.build" "$debug/CCryptoBoringSSLShims.build" "$debug/CXKCP.build" "$debug/CXKCPShims.build" -name '*.o' | sort)
  }

  # BeaconKit's values and codec: what every decoder reads into. The engine (Engine/) needs
  # swift-collections and is not fuzzed here; BeaconRegion is the one engine type a scenario
  # names (its monitored regions).
  beaconkit=(Sources/BeaconKit/*.swift Sources/BeaconKit/Codec/*.swift Sources/BeaconKit/Engine/BeaconRegion.swift)
  hci_sources=(Sources/BeaconHCI/Packets/*.swift Sources/BeaconHCI/Transport/H4Framer.swift
    Sources/BeaconHCI/Capture/CaptureReader.swift Sources/BeaconHCI/Capture/LELinkLayer.swift
    Sources/BeaconHCI/Beacon/SightingDecoder.swift Sources/BeaconHCI/Beacon/CaptureReplay.swift)

  max_len=4096
  seeds=Fuzz/corpus-$target
  case "$target" in
    decoders)
      # The codec and the core values it reads, in one module.
      sources=(Sources/BeaconKit/Codec/*.swift)
      for core in AdvertisingReport BeaconIdentity BluetoothAddress DecodeError IBeaconFrame MeasuredPower OtherFrames Sighting; do
        sources+=("Sources/BeaconKit/$core.swift")
      done
      module=BeaconKitFuzz; harness=Fuzz/FuzzDecoders.swift; seeds=Fuzz/corpus
      # HCI events and advertising data are at most 258 bytes; longer inputs only slow the search.
      max_len=512 ;;
    mqtt)
      sources=(Sources/BeaconMQTT/Codec/*.swift); module=BeaconMQTTFuzz; harness=Fuzz/FuzzMQTT.swift; max_len=1024 ;;
    hci)
      library BeaconKit "${beaconkit[@]}"
      sources=("${hci_sources[@]}"); module=BeaconHCI; harness=Fuzz/FuzzHCI.swift; max_len=1024 ;;
    capture)
      library BeaconKit "${beaconkit[@]}"
      sources=("${hci_sources[@]}"); module=BeaconHCI; harness=Fuzz/FuzzCapture.swift ;;
    scenario)
      library BeaconKit "${beaconkit[@]}"
      library BeaconLocate Sources/BeaconLocate/*.swift
      # Scenario faults name the fleet's battery types.
      library BeaconFleet Sources/BeaconFleet/*.swift
      # A scenario's rotating beacons carry a key; HMAC-SHA256 comes from swift-crypto, linked
      # from the package's debug build uninstrumented (it is not what is fuzzed here).
      swift_crypto
      library BeaconRotation Sources/BeaconRotation/*.swift
      # The scenario model, loader and simulation; the evaluation (which runs the engine) and the
      # attack replays (swift-collections) are left out.
      sources=()
      for file in Sources/BeaconSimulator/*.swift; do
        case "$file" in *Evaluation*|*Location*|*RoomFilterVariant*|*FaultScoring*|*PeerRoomDeciders*|*AttackedSimulation*) ;; *) sources+=("$file") ;; esac
      done
      module=BeaconSimulator; harness=Fuzz/FuzzScenario.swift
      # The largest example scenario is 16 KB.
      max_len=20000 ;;
    batch)
      library BeaconKit "${beaconkit[@]}"
      # The wire type and the compact layout; the uploader (AsyncHTTPClient) and the ByteBuffer
      # adapters (CompactSightingBatch+ByteBuffer.swift) are left out.
      library BeaconGateway Sources/BeaconGateway/SightingBatch.swift Sources/BeaconGateway/CompactSightingBatch.swift
      sources=(Sources/BeaconServer/Database/DatabaseLocation.swift Sources/BeaconServer/Ingest/SightingBatch.swift
        Sources/BeaconServer/Ingest/AprilBrotherUpload.swift Sources/BeaconServer/Ingest/MessagePackReader.swift Fuzz/ServerShims.swift)
      module=BeaconServer; harness=Fuzz/FuzzBatch.swift; max_len=8192 ;;
    csv)
      library BeaconKit "${beaconkit[@]}"
      library BeaconLocate Sources/BeaconLocate/*.swift
      # The readers and the registry values they fill; the SQL parts are in the *+Store.swift files.
      sources=(Sources/BeaconServer/Database/DatabaseLocation.swift
        Sources/BeaconServer/Registry/{CSV,Directory,BulkConfiguration,RegistryModels,NumberingPlan,NameText,OmittableField}.swift)
      module=BeaconServer; harness=Fuzz/FuzzCSV.swift; max_len=8192 ;;
  esac

  binary=$out/fuzz-$target
  if [ ! -f "$binary" ] || [ -n "$(find "${sources[@]}" "$harness" "${objects[@]}" -newer "$binary" | head -1)" ]; then
    swiftc "${swift_flags[@]}" -module-name "$module" "${sources[@]}" "$harness" "${objects[@]}" -o "$binary"
  fi
  # FUZZ_BUILD_ONLY=1 builds without running (to build the next target while one runs).
  [ -z "${FUZZ_BUILD_ONLY:-}" ] || return 0

  # A trap is reported by libFuzzer and ASan; Swift's own backtracer would only trip ASan.
  export SWIFT_BACKTRACE=enable=no
  # Allocation stacks two frames deep and a 16 MB quarantine instead of 30 frames and 256 MB:
  # recording every allocation's stack and recycling the quarantine were a third of each run of
  # the csv target. A report still has the faulting stack; a use after free is still caught
  # while the block sits in the quarantine.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-malloc_context_size=2:quarantine_size_mb=16}
  options=("$@")
  [ ${#options[@]} -gt 0 ] || options=(-runs=10000000)
  dictionary=()
  [ -f "Fuzz/$target.dict" ] && dictionary=("-dict=Fuzz/$target.dict")
  mkdir -p "Fuzz/corpus-$target-run"
  exec "$binary" -artifact_prefix="Fuzz/out/$target-" -print_final_stats=1 -timeout=1 -rss_limit_mb=2048 \
    -detect_leaks=1 -max_len=$max_len "${dictionary[@]}" "${options[@]}" "Fuzz/corpus-$target-run" "$seeds"
}

main "$@"
