#!/usr/bin/env bash
# Answering a page from the phone, on the real daemon (issue: answer it from the phone). The e2e
# config gives zwatch a Telegram channel whose api_url is the sink's Telegram fake in the guest
# (e2e/sink/telegram.go: sendMessage, a getUpdates long poll, answerCallbackQuery,
# editMessageReplyMarkup; every call logged to tg.jsonl with the guest time). sc_offline calls
# answer_offline while one raidz2 disk is OFFLINE: the page reached the fake with its buttons;
# the sink taps Acknowledge as user 123456789 (answer_users); zwatch's getUpdates loop takes the
# tap, acknowledges the incident and replaces the buttons; `zwatch alerts --json` shows the
# acknowledgement; a second disk OFFLINE then pages again despite it. The checks count as the
# offline scenario's (CI's second try reruns offline).
E2E_TG_LOG=$E2E_SHARE/out/tg.jsonl

# tg_first METHOD AFTER_NS [CONTAINS]: the guest time of the first call METHOD after AFTER_NS whose
# payload contains CONTAINS; exit 1 when none.
tg_first() {
  local m=$1 after=$2 c=${3:-}
  [ -r "$E2E_TG_LOG" ] || return 1
  jq -r --arg m "$m" --argjson a "$after" --arg c "$c" \
    'select(.method == $m and .recv_ns > $a and ($c == "" or (.payload | tostring | contains($c)))) | .recv_ns' "$E2E_TG_LOG" | head -1 | grep .
}

# ack_of INCIDENT-TEXT: "by source" of the acknowledged alert whose summary contains the text
ack_of() {
  vm_run "zwatch alerts --json --config $G/zwatch.yaml" 2>/dev/null |
    jq -r --arg c "$1" '[.active[] | select((.summary | contains($c)) and .ack != null) | "\(.ack.by) \(.ack.source)"] | first // empty'
}

answer_offline() {
  local s=offline t0=$1 tp tm te ta end by t1 tn
  if ! tm=$(tg_first sendMessage "$t0" "$V_VD1"); then
    bad $s "the page reached Telegram (the sink's fake)" "no sendMessage naming $V_VD1"; return 1
  fi
  # -n and inputs: with one filter per line, jq -e's status is the last line's (4 when it prints nothing)
  if jq -n -e --argjson t "$tm" '[inputs | select(.recv_ns == $t) | .payload.reply_markup.inline_keyboard[0] | map(.text) | index("✅ Acknowledge") != null] | any' "$E2E_TG_LOG" >/dev/null; then
    ok $s "the Telegram page carries the Acknowledge and Snooze buttons"
  else
    bad $s "the Telegram page carries the Acknowledge and Snooze buttons" "$(jq -c --argjson t "$tm" 'select(.recv_ns == $t) | .payload.reply_markup' "$E2E_TG_LOG")"
  fi
  tp=$(vm_run "sink tap http://127.0.0.1:9099 Acknowledge $V_VD1") || { bad $s "tap Acknowledge in the Telegram fake"; return 1; }
  end=$(( $(date +%s) + 60 ))
  until te=$(tg_first editMessageReplyMarkup "$tp" "Acknowledged by @alice"); do
    (( $(date +%s) >= end )) && break; sleep 0.3
  done
  if [ -n "$te" ]; then
    ok $s "a tap on Acknowledge is answered: the buttons say Acknowledged by @alice" "$(ms "$te" "$tp") ms"
    local td; td=$(tg_first tap-delivered "$tp") && figure answer "tap -> handed to zwatch by getUpdates" "$(ms "$td" "$tp")" ms "guest clock; the fake answers the waiting long poll at once"
    figure answer "tap -> buttons replaced with Acknowledged by @alice" "$(ms "$te" "$tp")" ms "guest clock: zwatch's getUpdates loop, the answer on the bus, answerCallbackQuery, editMessageReplyMarkup"
  else
    bad $s "a tap on Acknowledge is answered (editMessageReplyMarkup)" "none within 60 s"
  fi
  end=$(( $(date +%s) + 60 ))
  until by=$(ack_of "$V_VD1") && [ -n "$by" ]; do
    (( $(date +%s) >= end )) && break; sleep 0.5
  done
  ta=$(vm_run "date +%s%N")
  if [ "$by" = "@alice telegram:phone" ]; then
    ok $s "zwatch alerts shows the incident acknowledged by @alice (telegram:phone)"
    figure answer "tap -> acknowledged in zwatch alerts --json" "$(ms "$ta" "$tp")" ms "guest clock; an upper bound: each look is a zwatch alerts --json run in the TCG guest (seconds), 0.5 s apart"
  else
    bad $s "zwatch alerts shows the incident acknowledged by @alice (telegram:phone)" "got '${by:-nothing}'"
  fi
  # A change for the worse pages again despite the acknowledgement.
  t1=$(vm_run "date +%s%N; zpool offline vault $V_ATA2 >&2" | head -1)
  if tn=$(wait_note 30 --after "$t1" --status firing --contains "$V_ATA2"); then
    ok $s "a second disk OFFLINE pages again despite the acknowledgement" "$(ms "$tn" "$t1") ms"
    versus_zed $s "$tn" "$t1" 'pool vault' figure "second disk"
  else
    bad $s "a second disk OFFLINE pages again despite the acknowledgement" "none within 30 s"; dump_notes "$t1"
  fi
  g "zpool online vault $V_ATA2" || bad $s "zpool online vault $V_ATA2"
}

# answer_replace T0: the unplugged disk replaced from the phone (actions.replace). The sink taps
# Replace on the unplug page; zwatch runs zwatch replace's checks and asks in a new message with
# the exact command and a button per qualifying disk; the sink taps the one of the spare (serial
# ZWS0003); zwatch runs zpool replace, follows the resilver and sends its end as a new message.
answer_replace() {
  local s=replace t0=$1 tp tq tc te end
  tp=$(vm_run "sink tap http://127.0.0.1:9099 Replace $V_SD1") || { bad $s "tap Replace on the unplug page in the Telegram fake" "no message naming $V_SD1 with a Replace button"; return 1; }
  end=$(( $(date +%s) + 120 ))
  until tq=$(tg_first sendMessage "$tp" "erases everything"); do
    (( $(date +%s) >= end )) && break; sleep 0.5
  done
  if [ -z "$tq" ]; then
    bad $s "a tap on Replace asks with the command (a new message with 'erases everything')" "none within 120 s: $(jq -r --argjson a "$tp" 'select(.recv_ns > $a and .method == "sendMessage") | .payload.text' "$E2E_TG_LOG" | head -5)"
    return 1
  fi
  local q; q=$(jq -r --argjson t "$tq" 'select(.recv_ns == $t) | .payload.text' "$E2E_TG_LOG")
  printf '%s\n' "$q" > "$E2E_OUT/replace.question.txt"
  if grep -q "zpool replace vault [0-9]* $D/$SPARE" <<<"$q"; then
    ok $s "the question names the exact command: zpool replace vault GUID $D/$SPARE" "$(ms "$tq" "$tp") ms after the tap"
    figure $s "tap Replace -> the question with the command" "$(ms "$tq" "$tp")" ms "guest clock: zwatch replace's checks (zpool status, lsblk, blkid, wipefs, smartctl per disk) in the TCG guest"
  else
    bad $s "the question names zpool replace vault GUID $D/$SPARE" "$(head -5 <<<"$q")"; return 1
  fi
  tc=$(vm_run "sink tap http://127.0.0.1:9099 'Erase ZWS0003' $SPARE") || { bad $s "tap 'Erase ZWS0003 and replace' in the Telegram fake"; return 1; }
  end=$(( $(date +%s) + 60 ))
  until tg_first editMessageReplyMarkup "$tc" "Confirmed by @alice" >/dev/null; do
    (( $(date +%s) >= end )) && break; sleep 0.5
  done
  tg_first editMessageReplyMarkup "$tc" "Confirmed by @alice" >/dev/null && ok $s "the confirmation is taken: the question's buttons say Confirmed by @alice" \
    || bad $s "the confirmation is taken (Confirmed by @alice)" "none within 60 s"
  end=$(( $(date +%s) + 600 ))
  until te=$(tg_first sendMessage "$tc" "✅ Replaced"); do
    (( $(date +%s) >= end )) && break
    tg_first sendMessage "$tc" "❌" >/dev/null && break
    sleep 1
  done
  if [ -n "$te" ]; then
    ok $s "the phone is told the replacement ended: ✅ Replaced … the resilver finished"
    figure $s "tap confirm -> ✅ Replaced (resilver followed to the end)" "$(ms "$te" "$tc")" ms "guest clock"
    tg_first editMessageText "$tc" "Resilvering onto" >/dev/null && ok $s "progress shown in the confirmation's message (editMessageText)" \
      || say "no progress edit (the resilver ended before the first reading)"
  else
    bad $s "the phone is told the replacement ended (✅ Replaced)" "$(jq -r --argjson a "$tc" 'select(.recv_ns > $a and .method == "sendMessage") | .payload.text' "$E2E_TG_LOG" | tail -3)"
    return 1
  fi
}

# sc_ackrepeat: an acknowledged incident is not repeated, while one nobody answered is. zwatch is
# restarted with repeats every minute (the shortest rules.repeat_* takes); two mirror pools over
# files in the guest, ackr and ackc, each lose a device (zpool offline); the sink taps Acknowledge
# on ackr's Telegram page; ackc's page repeats after the minute, ackr's does not. Then the pools go
# and zwatch runs again on the e2e's own config.
AR_DIR=/var/tmp/ackrepeat
sc_ackrepeat() {
  local s=ackrepeat t0 tr tc ta trep n
  E2E_REPEAT=1m e2e_config > "$E2E_SHARE/zwatch.yaml"
  zw_stop; zw_start || { bad $s "zwatch starts with repeats every minute"; return 1; }
  g "mkdir -p $AR_DIR && for f in ra rb ca cb; do truncate -s 128M $AR_DIR/\$f.img; done &&
     zpool create -f ackr mirror $AR_DIR/ra.img $AR_DIR/rb.img && zpool create -f ackc mirror $AR_DIR/ca.img $AR_DIR/cb.img" \
    || { bad $s "zpool create ackr and ackc (mirrors of files)"; return 1; }
  sleep 5
  t0=$(vm_run "date +%s%N; zpool offline ackr $AR_DIR/rb.img >&2; zpool offline ackc $AR_DIR/cb.img >&2" | head -1)
  if tr=$(wait_note 60 --after "$t0" --status firing --contains "$AR_DIR/rb.img") && tc=$(wait_note 60 --after "$t0" --status firing --contains "$AR_DIR/cb.img"); then
    ok $s "both pools page their OFFLINE device"
  else
    bad $s "both pools page their OFFLINE device" "ackr: ${tr:-none}, ackc: ${tc:-none}"; dump_notes "$t0"; ackrepeat_end; return 1
  fi
  local end=$(( $(date +%s) + 30 ))
  until tg_first sendMessage "$t0" "$AR_DIR/rb.img" >/dev/null; do (( $(date +%s) >= end )) && break; sleep 0.5; done
  ta=$(vm_run "sink tap http://127.0.0.1:9099 Acknowledge $AR_DIR/rb.img") || { bad $s "tap Acknowledge on ackr's page"; ackrepeat_end; return 1; }
  end=$(( $(date +%s) + 30 ))
  until tg_first editMessageReplyMarkup "$ta" "Acknowledged by @alice" >/dev/null; do (( $(date +%s) >= end )) && break; sleep 0.3; done
  tg_first editMessageReplyMarkup "$ta" "Acknowledged by @alice" >/dev/null && ok $s "ackr's incident acknowledged from Telegram" \
    || { bad $s "ackr's incident acknowledged from Telegram" "no Acknowledged by @alice within 30 s"; ackrepeat_end; return 1; }
  # ackc repeats after its minute (a repeat comes at the first flush after it); ackr must not.
  if trep=$(wait_note 100 --after "$((tc + 1000000))" --status firing --contains "$AR_DIR/cb.img"); then
    ok $s "the incident nobody answered repeats after the minute (control)" "$(ms "$trep" "$tc") ms after its page"
    sleep 20 # ackr paged at about the same time: its repeat would be due by now
    n=$(sink --count --after "$((tr + 1000000))" --status firing --contains "$AR_DIR/rb.img")
    [ "$n" = 0 ] && ok $s "the acknowledged incident is not repeated ($(( ($(gnow) - tr) / 1000000000 )) s after its page, repeats every 60 s)" \
      || { bad $s "the acknowledged incident is not repeated" "$n repeat(s)"; dump_notes "$tr"; }
  else
    bad $s "the incident nobody answered repeats after the minute (control)" "none within 100 s"; dump_notes "$tc"
  fi
  ackrepeat_end
}

ackrepeat_end() {
  g "zpool destroy ackr; zpool destroy ackc; rm -rf $AR_DIR" || bad ackrepeat "zpool destroy ackr ackc"
  destroyed ackrepeat ackr; destroyed ackrepeat ackc
  e2e_config > "$E2E_SHARE/zwatch.yaml"
  zw_stop; zw_start || bad ackrepeat "zwatch starts again on the e2e's own config"
}
