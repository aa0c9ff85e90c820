#!/usr/bin/env bash
# The idle cost of answering from the phone: two `zwatch run` daemons side by side on this
# machine, the same config but for answer_users on their Telegram channel, so only B runs the
# getUpdates long poll (against the e2e sink's Telegram fake, which holds each poll 50 s as
# Telegram does). Prints each daemon's CPU time over the measured window and its VmRSS.
# Usage: scripts/bench-answer-pollers.sh [WARMUP_S] [WINDOW_S]   (default 60 300)
set -euo pipefail
cd "$(dirname "$0")/.."
GO=${GO:-go}
warm=${1:-60} window=${2:-300}
dir=$(mktemp -d /tmp/zwatch-pollers.XXXXXX)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$dir"' EXIT
"$GO" build -o "$dir/zwatch" ./cmd/zwatch
"$GO" build -o "$dir/sink" ./e2e/sink
"$dir/sink" serve 127.0.0.1:19099 "$dir/sink.jsonl" 2>/dev/null & pids+=($!)
for v in a b; do
  answers=""; [ $v = b ] && answers=', answer_users: ["123456789"]'
  cat > "$dir/$v.yaml" <<YAML
host: bench-$v
log: {level: info, format: text}
http: {listen: ""}
notify:
  console: true
  channels:
    - {name: phone, type: telegram, token: "123456:ABC-bench", chat_ids: ["42"], api_url: "http://127.0.0.1:19099/tg"$answers}
YAML
  chmod 600 "$dir/$v.yaml"
  "$dir/zwatch" run --config "$dir/$v.yaml" --state-dir "$dir/state-$v" >"$dir/$v.log" 2>&1 & pids+=($!)
done
pa=${pids[1]} pb=${pids[2]}
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }   # utime + stime, clock ticks
sleep "$warm"
a0=$(cpu "$pa") b0=$(cpu "$pb")
sleep "$window"
a1=$(cpu "$pa") b1=$(cpu "$pb")
hz=$(getconf CLK_TCK)
polls=$(grep -c '"method":"tap-delivered"' "$dir/tg.jsonl" 2>/dev/null || true)
for v in a b; do
  pid=$pa c0=$a0 c1=$a1 what="without answers"
  [ $v = b ] && { pid=$pb c0=$b0 c1=$b1 what="with the getUpdates poller"; }
  awk -v v="$v" -v w="$what" -v c="$((c1 - c0))" -v hz="$hz" -v s="$window" -v rss="$(awk '/VmRSS/{print $2}' "/proc/$pid/status")" \
    'BEGIN { printf "%s (%s): CPU %.2f s in %d s = %.3f %% of a core; VmRSS %.1f MiB\n", v, w, c / hz, s, 100 * c / hz / s, rss / 1024 }'
done
echo "getUpdates answered with a tap: ${polls:-0} (none expected: idle)"
