#!/usr/bin/env bash
# Builds BeaconKit's decoders with libFuzzer and AddressSanitizer and runs them.
#   Fuzz/run.sh                      # 10 million executions
#   Fuzz/run.sh -max_total_time=60   # any libFuzzer options replace the default
#   Fuzz/run.sh mqtt [options]       # BeaconMQTT's packet decoder instead (seeds in Fuzz/corpus-mqtt)
# The seeds in Fuzz/corpus are the test vectors; new inputs go to Fuzz/corpus-run, crashes to Fuzz/out.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p Fuzz/out Fuzz/corpus-run

if [ "${1:-}" = "mqtt" ]; then
  shift
  mkdir -p Fuzz/corpus-mqtt-run
  swiftc -sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6 \
    -module-name BeaconMQTTFuzz Sources/BeaconMQTT/Codec/*.swift Fuzz/FuzzMQTT.swift -o Fuzz/out/fuzz-mqtt
  options=("$@")
  [ ${#options[@]} -gt 0 ] || options=(-runs=10000000)
  exec Fuzz/out/fuzz-mqtt -artifact_prefix=Fuzz/out/mqtt- -print_final_stats=1 -max_len=1024 "${options[@]}" Fuzz/corpus-mqtt-run Fuzz/corpus-mqtt
fi

# The codec and the core values it reads. The rest of BeaconKit (engine, regions) is not
# needed by the decoders and may pull in other packages.
sources=(Sources/BeaconKit/Codec/*.swift)
for core in AdvertisingReport BeaconIdentity BluetoothAddress DecodeError IBeaconFrame MeasuredPower OtherFrames Sighting; do
  sources+=("Sources/BeaconKit/$core.swift")
done

swiftc -sanitize=fuzzer,address -parse-as-library -O -g -swift-version 6 \
  -module-name BeaconKitFuzz "${sources[@]}" Fuzz/FuzzDecoders.swift -o Fuzz/out/fuzz-decoders

options=("$@")
[ ${#options[@]} -gt 0 ] || options=(-runs=10000000)
# HCI events and advertising data are at most 258 bytes; longer inputs only slow the search.
exec Fuzz/out/fuzz-decoders -artifact_prefix=Fuzz/out/ -print_final_stats=1 -max_len=512 "${options[@]}" Fuzz/corpus-run Fuzz/corpus
