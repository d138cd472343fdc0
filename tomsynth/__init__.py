"""ToM-Synth: 36 mental states x 96 social situations x 2 formats, LLM synthesis, quality filter."""
