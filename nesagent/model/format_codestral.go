package model

// codestralFormat is Mistral's Codestral at its FIM endpoint (/v1/fim/completions, model
// codestral-latest), as Mistral's FIM documentation describes it and Zed's crates/codestral and
// Continue's core/llm/llms/Mistral.ts ask it: the text before the cursor as prompt, the text
// after it as suffix, the answer in choices[0].message.content. It is fim with the request sent
// to that endpoint whatever the server's address, and its answer cleaned as every FIM answer
// (cleanFIM). A Codestral key works at codestral.mistral.ai (the default address), a general
// Mistral key at api.mistral.ai.
type codestralFormat struct{}

func (codestralFormat) Name() string { return "codestral" }

func (codestralFormat) Build(in *input, lim limits) (*call, error) {
	c, err := fimFormat{}.Build(in, lim)
	if err != nil {
		return nil, err
	}
	c.fim.Hosted = hostedFIMPath
	return c, nil
}
