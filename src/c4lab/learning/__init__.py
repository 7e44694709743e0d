"""Learning baselines: agents that learn to play from self-play rather than search.

``c4lab.learning.qlearning`` holds tabular Q-learning: the trainer behind
``c4lab train qlearning`` and the table file that the ``qlearning`` agent
plays from.  A table can only cover small boards (4x4 fully, 5x4 and 5x5
partially); see that module's docstring.
"""
