package workspace

import (
	"reflect"
	"testing"
)

// TestHideKeyEnv: a command line shows --api-key-env's value when it is a variable's name, and
// hides it when it is not (the key itself, given by mistake), in each way a flag is written.
func TestHideKeyEnv(t *testing.T) {
	const key = "sk-test-7f3a9c2e5b1d4068a9e2c7f1b3d5e8a0"
	const hidden = "[hidden: not a variable's name]"
	for _, tc := range []struct{ in, want []string }{
		{[]string{"agent", "--api-key-env", "OPENAI_API_KEY"}, []string{"agent", "--api-key-env", "OPENAI_API_KEY"}},
		{[]string{"agent", "--api-key-env", key}, []string{"agent", "--api-key-env", hidden}},
		{[]string{"agent", "-api-key-env", key, "--model", "m"}, []string{"agent", "-api-key-env", hidden, "--model", "m"}},
		{[]string{"agent", "--api-key-env=" + key}, []string{"agent", "--api-key-env=" + hidden}},
		{[]string{"agent", "--api-key-env=MY_KEY"}, []string{"agent", "--api-key-env=MY_KEY"}},
		{[]string{"agent", "--api-key-env"}, []string{"agent", "--api-key-env"}},
		{[]string{"---api-key-env", key}, []string{"---api-key-env", key}},
	} {
		if got := HideKeyEnv(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("HideKeyEnv(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	in := []string{"--api-key-env", key}
	HideKeyEnv(in)
	if in[1] != key {
		t.Error("HideKeyEnv changed its argument")
	}
}

// TestKeyEnvProblem: names pass; keys and names no variable has do not, and the words never
// repeat what was given.
func TestKeyEnvProblem(t *testing.T) {
	for _, ok := range []string{"OPENAI_API_KEY", "MY_KEY", "_K", "key2", "openrouter_api_key_2024"} {
		if p := KeyEnvProblem(ok); p != "" {
			t.Errorf("%s: %s", ok, p)
		}
	}
	for name, want := range map[string]string{
		"sk-proj-0123456789":         "looks like a key itself",
		"ghp_0123456789abcdefABCDEF": "looks like a key itself",
		"AbCdEf0123456789GhIjKl":     "looks like a key itself",
		"MY KEY":                     "holds characters no variable's name has",
		"2KEY":                       "holds characters no variable's name has",
		"":                           "holds characters no variable's name has",
	} {
		if p := KeyEnvProblem(name); p != want {
			t.Errorf("%q: %q, want %q", name, p, want)
		}
	}
}
