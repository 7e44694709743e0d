"""Bridges to other game frameworks.

``c4lab.adapters.kaggle``: Kaggle's ConnectX (our agents as ConnectX agent
functions, Kaggle's built-in agents as the ``kaggle`` agent spec).  The
PettingZoo environment is ``c4lab.env``.  Nothing here imports the other
frameworks until it is used.
"""

from c4lab.adapters.kaggle import (
    ConnectXError,
    KaggleAgent,
    connectx_agent,
    from_connectx,
    position_from_cells,
    to_connectx,
)

__all__ = [
    "ConnectXError",
    "KaggleAgent",
    "connectx_agent",
    "from_connectx",
    "position_from_cells",
    "to_connectx",
]
