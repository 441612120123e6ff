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
fim=nesagent/model/format_fim.go
# rule ~ file ~ the condition as written ~ the condition that never holds (sed patterns)
rules=(
	"whitespace~$engine~if squash(text) == squash(region) {~if false \&\& squash(text) == squash(region) {"
	"prompt-copy~$engine~if m != \"\" \&\& strings.Contains(text, m)~if false \&\& m != \"\" \&\& strings.Contains(text, m)"
	"runaway~$engine~if len(text) > 3\*len(region)+maxGrowth {~if false \&\& len(text) > 3*len(region)+maxGrowth {"
	"runaway~$engine~; run >= 3 \&\& run > repeatedLines(regionLines)~; false \&\& run >= 3 \&\& run > repeatedLines(regionLines)"
	"rewrite~$engine~if total >= 3 \&\& 2\*kept < total || total == 2 \&\& kept == 0 {~if false \&\& (total >= 3 \&\& 2*kept < total || total == 2 \&\& kept == 0) {"
	"undo~$engine~if hasLast \&\& undoes(in, c, text, last) {~if false \&\& hasLast \&\& undoes(in, c, text, last) {"
	"slip~$engine~return back \&\& !slip(in, last)~return back"
	"cut-short~$engine~if !e.cfg.NoGate \&\& answer.Cut~if false \&\& !e.cfg.NoGate \&\& answer.Cut"
	"repeats-suffix~$fim~return a, RuleRepeatsSuffix, \(.*\)$~if false { return a, RuleRepeatsSuffix, \1 }"
	"past-line~$fim~	if pastLine {~	if false \&\& pastLine {"
	"repeats-above~$fim~return a, RuleRepeatsAbove, \(.*\)$~if false { return a, RuleRepeatsAbove, \1 }"
)
status=0
for rule in whitespace prompt-copy runaway rewrite undo slip cut-short repeats-suffix past-line repeats-above; do
	cp "$engine" "$work/$engine"
	cp "$fim" "$work/$fim"
	for r in "${rules[@]}"; do
		IFS='~' read -r name file from to <<<"$r"
		[ "$name" = "$rule" ] || continue
		before=$(md5sum <"$work/$file")
		sed -i "s/$from/$to/" "$work/$file"
		if [ "$before" = "$(md5sum <"$work/$file")" ]; then
			echo "$rule: the mutation no longer applies to $file: $from"
			status=1
		fi
	done
	if ! (cd "$work" && gofmt -w "$fim" && go vet ./nesagent/model/ >/dev/null 2>&1); then
		echo "$rule: the mutation does not build: update the patterns"
		status=1
		continue
	fi
	if (cd "$work" && go test -count=1 ./nesagent/model/ >/dev/null 2>&1 && go test -count=1 -run 'TestEvalBinaryGateKeepsNoiseBack|TestEvalBinary$|TestEvalBinaryFIM' ./cmd/acp-lsp-bridge/ >/dev/null 2>&1); then
		echo "$rule: taken out, every test still passes"
		status=1
	else
		echo "$rule: taken out, a test fails (as it should)"
	fi
done
cp "$engine" "$work/$engine"
cp "$fim" "$work/$fim"
exit $status
