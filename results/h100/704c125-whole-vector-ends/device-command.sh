#!/usr/bin/env bash
# device call: the whole-vector partial ends (new) against HEAD (base), 16-bit odd and padded
# rows only, interleaved, then the variant's memcheck, until $1 seconds.
set -u
t0=$(date +%s); total=${1:-200}
export LD_LIBRARY_PATH=$PWD/build/carry/lib
mkdir -p build/release/src/harness build/variant/tests/kernels runs/logs
xz -dc build/carry/base/softmax-bench.xz > build/release/src/harness/softmax-bench
xz -dc build/carry/new/softmax-bench.xz > build/variant/softmax-bench
chmod +x build/release/src/harness/softmax-bench build/variant/softmax-bench
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "card: $card"
nvidia-smi > runs/logs/nvidia-smi-full.txt 2>&1
left() { echo $(( total - ($(date +%s) - t0) )); }
for c in ab-odd16 ab-pad16; do
  for k in base variant base2 variant2; do
    [ "$(left)" -gt 15 ] || { echo "ab $k $c skipped"; continue; }
    b=build/release/src/harness/softmax-bench; [[ $k == variant* ]] && b=build/variant/softmax-bench
    timeout $(( $(left) - 5 )) $b run build/carry/$c.yaml --no-counters --out runs/ab-$k-$c --force --quiet > runs/logs/ab-$k-$c.log 2>&1
    echo "ab $k $c rc=$? at $(( $(date +%s) - t0 ))s"
    cp -r runs "$OUT/"
  done
done
if [ "$(left)" -gt 40 ]; then
  xz -dc build/carry/new/smr_kernel_tests.xz > build/variant/tests/kernels/smr_kernel_tests
  chmod +x build/variant/tests/kernels/smr_kernel_tests
  SMR_SANITIZE_TOOLS=memcheck timeout $(( $(left) - 5 )) scripts/sanitize build/variant > runs/logs/variant-memcheck.log 2>&1
  echo "variant memcheck rc=$?: $(tail -1 runs/logs/variant-memcheck.log)"
  cp -r build/variant/sanitize runs/logs/variant-sanitize 2>/dev/null
fi
cp -r runs "$OUT/"
