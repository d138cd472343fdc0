"""What the two LLM commands, `contexts` and `infill`, share: the model and judge options of their
command lines (`backend`), opening and closing those backends while they run (`command`), and
reading structured answers out of model replies (`json`). Each command keeps its own folder
(`exploretom/contexts/`, `exploretom/infill/`), named as the command is."""
