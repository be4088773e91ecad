#!/usr/bin/env bash
# The worst registration a careless user can make: `booger projects add / --force`. Samples
# the daemon's RSS every 100 ms for 20 s of indexing, removes the project, and checks that
# the CPU stops (per-thread ticks over 2 s) and the index is gone. Needs a release build:
#   cargo build --release -p boogerd -p booger-client && scripts/bench/register-root.sh
set -u
T=$(mktemp -d); export BOOGER_HOME=$T/data BOOGER_SOCKET=$T/sock HOME=$T
B="$(cd "$(dirname "$0")/../.." && pwd)/target/release"
$B/boogerd --socket $T/sock --home $T/data > $T/log 2>&1 &
PID=$!
sleep 1
$B/booger projects add / --force
peak=0
for i in $(seq 1 200); do
  r=$(awk '/VmRSS/{print $2}' /proc/$PID/status); [ "$r" -gt "$peak" ] && peak=$r
  sleep 0.1
done
echo "peak RSS during 20 s of indexing /: $((peak/1024)) MB"
t0=$(date +%s.%N)
$B/booger projects remove root >/dev/null
t1=$(date +%s.%N)
for i in $(seq 1 30); do
  r=$(awk '/VmRSS/{print $2}' /proc/$PID/status); [ "$r" -gt "$peak" ] && peak=$r
  sleep 0.1
done
snap() { for t in /proc/$PID/task/*; do echo "$(basename $t)-$(cat $t/comm) $(awk '{print $14+$15}' $t/stat)"; done | sort; }
snap > $T/a
c0=$(awk '{print $14+$15}' /proc/$PID/stat); sleep 2; c1=$(awk '{print $14+$15}' /proc/$PID/stat)
snap > $T/b
paste $T/a $T/b | awk '$4-$2>5{print "  still busy after removal:", $1, $4-$2, "ticks"}'

echo "remove took $(echo "$t1 - $t0" | bc) s; CPU ticks in 2 s after: $((c1-c0)); peak RSS overall: $((peak/1024)) MB; RSS now: $(($(awk '/VmRSS/{print $2}' /proc/$PID/status)/1024)) MB"
[ -z "$(ls -A $T/data/indexes/ 2>/dev/null)" ] && echo "index deleted" || echo "INDEX LEFT BEHIND: $(ls $T/data/indexes/)"
kill $PID; wait $PID
grep -i "cancel\|panic" $T/log | head -5
rm -rf $T
