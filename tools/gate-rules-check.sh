#!/usr/bin/env bash
# Each rule of the model agent's quality gate earns its place: disabled in turn (in a copy of the
# tree, never this one), it must fail a test. The tests are the gate's own unit tests
# (nesagent/model) and eval's run of every built-in scenario with every kind of noise
# (TestEvalBinaryGateKeepsNoiseBack). Prints one line per rule; exits 1 when a rule can be taken
# out with every test still passing, or when a mutation no longer applies (the code moved: update
# the patterns below).
#
#   bash tools/gate-rules-check.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar --exclude=.git -cf - . | tar -xf - -C "$work"
engine=nesagent/model/engine.go
# rule ~ the condition as written ~ the condition that never holds (sed patterns)
rules=(
	'whitespace~if squash(text) == squash(region) {~if false \&\& squash(text) == squash(region) {'
	'prompt-copy~if m != "" \&\& strings.Contains(text, m)~if false \&\& m != "" \&\& strings.Contains(text, m)'
	'runaway~if len(text) > 3\*len(region)+maxGrowth {~if false \&\& len(text) > 3*len(region)+maxGrowth {'
	'runaway~; run >= 3 \&\& run > repeatedLines(regionLines)~; false \&\& run >= 3 \&\& run > repeatedLines(regionLines)'
	'rewrite~if total >= 3 \&\& 2\*kept < total || total == 2 \&\& kept == 0 {~if false \&\& (total >= 3 \&\& 2*kept < total || total == 2 \&\& kept == 0) {'
	'undo~if hasLast \&\& undoes(in, c, text, last) {~if false \&\& hasLast \&\& undoes(in, c, text, last) {'
	'slip~return back \&\& !slip(in, last)~return back'
	'cut-short~if !e.cfg.NoGate \&\& answer.Cut~if false \&\& !e.cfg.NoGate \&\& answer.Cut'
)
status=0
for rule in whitespace prompt-copy runaway rewrite undo slip cut-short; do
	cp "$engine" "$work/$engine"
	for r in "${rules[@]}"; do
		IFS='~' read -r name from to <<<"$r"
		[ "$name" = "$rule" ] || continue
		before=$(md5sum <"$work/$engine")
		sed -i "s/$from/$to/" "$work/$engine"
		if [ "$before" = "$(md5sum <"$work/$engine")" ]; then
			echo "$rule: the mutation no longer applies to $engine: $from"
			status=1
		fi
	done
	if ! (cd "$work" && go vet ./nesagent/model/ >/dev/null 2>&1); then
		echo "$rule: the mutation does not build: update the patterns"
		status=1
		continue
	fi
	if (cd "$work" && go test -count=1 ./nesagent/model/ >/dev/null 2>&1 && go test -count=1 -run 'TestEvalBinaryGateKeepsNoiseBack|TestEvalBinary$' ./cmd/acp-lsp-bridge/ >/dev/null 2>&1); then
		echo "$rule: taken out, every test still passes"
		status=1
	else
		echo "$rule: taken out, a test fails (as it should)"
	fi
done
cp "$engine" "$work/$engine"
exit $status
