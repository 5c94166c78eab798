"""`make mutate`: mutation testing of the generator, the submitter (cosmic-ray) and the chart's
templates (lab/mutate/templates.py), each mutant tested by the tests of what it changed, on a copy
of the working tree. Prints the share of mutants killed per module."""
