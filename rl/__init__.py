"""GRPO and SFT training on the project's datasets (TRL, accelerate, DeepSpeed, vLLM)."""
