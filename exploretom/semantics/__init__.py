"""The story language and what a story means: story structures (`story`, written in Python with
`build`), the belief tracker and its message rules (`tracker`, `messages`, `facts`), the canonical
text (`render`), the questions and their answers (`questions`, `label`), the reasoning traces
(`trace`), and their checking by a second implementation of the rules (`replay`, `trace_check`,
`derived`). The bottom of exploretom: it imports nothing of the package's other folders."""
