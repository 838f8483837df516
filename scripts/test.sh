#!/usr/bin/env bash
# `make test`: the suite as two pytest processes at once (tests/conftest.py, --part).
# * serial: the tests that emulate a fabric (Mininet, namespaces: one at a time, under
#   the machine-wide emulation lock) or assert on elapsed time. In front, output live.
# * parallel: everything else (compiler, switch, controller, analysis...), beside it at
#   nice 10 in a session of its own, so that it takes the CPU the emulations leave idle
#   without slowing the recovery times they measure. Its output goes to
#   build/test-parallel.log and is summed up here at the end (in full when it failed).
# Arguments go to both (`make test PYTEST_ARGS='-k credit'`); with --part in them, a
# single pytest runs them as given. Exit status: nonzero when either part failed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
py=${PYTHON:-.venv/bin/python}

for arg in "$@"; do
  if [ "$arg" = "--part" ] || [[ "$arg" == --part=* ]]; then
    exec "$py" -m pytest "$@"
  fi
done

log=${FABRICLAB_TEST_LOG:-build/test-parallel.log}
mkdir -p "$(dirname "$log")"
# Its own session, so that the nice counts: with autogroup (sched_autogroup_enabled, on in
# Debian's kernels) the scheduler shares the CPU between sessions first and a nice value
# weighs only within one; the session's own weight is /proc/PID/autogroup. Started in the
# background of a script (no job control) setsid does not fork: $! stays pytest's PID.
stacks=${log%.log}-stacks.txt
rm -f "$stacks"
FABRICLAB_TEST_STACKS=$stacks setsid nice -n 10 "$py" -m pytest --part parallel "$@" >"$log" 2>&1 &
parallel_pid=$!
for _ in $(seq 100); do
  if [ "$(ps -o sid= -p "$parallel_pid" | tr -d ' ')" = "$parallel_pid" ]; then
    echo 10 2>/dev/null >"/proc/$parallel_pid/autogroup" || true
    break
  fi
  sleep 0.02
done
# Ours to stop, by PID (conftest turns SIGTERM into an interrupt: fixtures tear down).
trap 'kill -TERM "$parallel_pid" 2>/dev/null; wait "$parallel_pid"; exit 130' INT TERM
echo "test: the parallel part runs beside this one (pid $parallel_pid, output in $log)"

"$py" -m pytest --part serial "$@"
serial=$?
if kill -0 "$parallel_pid" 2>/dev/null; then
  echo "test: waiting for the parallel part ($(tail -c 300 "$log" | tr '\r' '\n' | grep -v '^$' | tail -1))"
fi
# Alone on the machine the parallel part needs ~10 min in all: still running this long
# after the serial part, it hangs. Then its threads' stacks (SIGUSR1: faulthandler,
# tests/conftest.py) and its last output are printed and it is stopped, so that a hang
# fails with evidence instead of eating the CI's time limit in silence.
hang_s=${FABRICLAB_PARALLEL_HANG_S:-900}
for _ in $(seq $((hang_s / 5))); do
  kill -0 "$parallel_pid" 2>/dev/null || break
  sleep 5
done
hung=0
if kill -0 "$parallel_pid" 2>/dev/null; then
  hung=1
  kill -USR1 "$parallel_pid" 2>/dev/null
  sleep 3
  echo "test: FAILED: the parallel part is still running ${hang_s} s after the serial part ended;"
  echo "test: its last output ($log):"
  tail -n 60 "$log"
  echo "test: its threads' stacks ($stacks):"
  cat "$stacks" 2>/dev/null
  kill -TERM "$parallel_pid" 2>/dev/null
  for _ in $(seq 60); do kill -0 "$parallel_pid" 2>/dev/null || break; sleep 0.5; done
  kill -KILL "$parallel_pid" 2>/dev/null
fi
wait "$parallel_pid"
parallel=$?
[ "$hung" -eq 1 ] && parallel=1
trap - INT TERM

echo
echo "==================== the parallel part ($log) ===================="
if [ "$hung" -eq 1 ]; then
  echo "(printed above)"
elif [ "$parallel" -ne 0 ] && [ "$parallel" -ne 5 ]; then
  cat "$log"
else
  sed -n '/short test summary info/,$p' "$log" | grep . || tail -n 3 "$log"
fi

# 5 = no test collected: fine for one part (arguments that select only the other one)
if [ "$serial" -eq 5 ] && [ "$parallel" -eq 5 ]; then exit 5; fi
for rc in "$serial" "$parallel"; do
  if [ "$rc" -ne 0 ] && [ "$rc" -ne 5 ]; then
    echo "test: FAILED (serial part exit $serial, parallel part exit $parallel)"
    exit 1
  fi
done
echo "test: both parts passed"
