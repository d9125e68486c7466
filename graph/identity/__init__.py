"""Person identity: which authorships are one person (see :mod:`~bibgraph.graph.identity.cluster`).

The package itself imports nothing: the site reads persons (:mod:`.pagedata`) without loading the clustering
libraries (numpy, scipy, scikit-learn) that only a build needs; the decision is :mod:`.decide`.
"""
