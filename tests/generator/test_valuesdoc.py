"""Tier 1: how the generated READMEs read a values.yaml's `# --` comments."""

from generator.valuesdoc import parameters


def test_a_parameter_is_its_comment_continued_by_plain_comment_lines():
    text = ("# -- GPUs per node\n#of the node type\n#  (all of them)\nperNode: 8\n"
            "# a comment that documents nothing\nother: 1\n"
            "image:\n  # -- Repository\n  repository: verl\n  # -- Tags\n  tags:\n    - a\n    - b\n")
    found = {p.path: (p.default, p.description) for p in parameters(text, prefix="x.")}
    assert found == {"x.perNode": ("8", "GPUs per node of the node type (all of them)"),
                     "x.image.repository": ("verl", "Repository"), "x.image.tags": ('["a", "b"]', "Tags")}


def test_a_parameter_comment_cut_off_by_a_blank_line_documents_nothing():
    text = "# -- An orphan\n\nloose: 1\n# -- A list\nlisted:\n  - a\n# --Tight\ntight: 2\n"
    found = {p.path: p.description for p in parameters(text)}
    assert found == {"listed": "A list", "tight": "Tight"}
