"""Random valid stories that meet the user's conditions: the paper's action sets and the
conditions (`action_sets`), the offline lexicon of story contexts (`lexicon`), and the sampler
that walks the story language one valid action at a time (`sampler`; the search expands nodes
with it). Imports only `exploretom.semantics`."""
