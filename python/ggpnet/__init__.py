"""ggpnet: games written in GDL compiled to propositional networks, from Python.

Load a :class:`Game` (from a path or the rules' text), then ask it for the
initial state, legal moves, next states, goals and random playouts on every
core; :class:`VectorEnv` steps many games at once with numpy arrays, for
learning. See ``docs/PYTHON.md`` in the repository.

>>> import ggpnet
>>> game = ggpnet.Game.load(ggpnet.DEFAULT_GAME)  # connect four
>>> game.roles
['red', 'yellow']
>>> state = game.initial_state()
>>> [str(m) for m in game.legal_moves(state, "red")][:3]
['(drop 1)', '(drop 2)', '(drop 3)']
"""

from . import errors
from ._ggpnet import (
    DEFAULT_GAME,
    MAX_JOINT_MOVES,
    MAX_THREADS,
    Game,
    Move,
    Playout,
    PlayoutReport,
    RtGame,
    RtState,
    State,
    Stream,
    VectorEnv,
    __version__,
)
from .errors import (
    AdapterError,
    EngineError,
    Error,
    ForeignMoveError,
    ForeignStateError,
    GdlError,
    IllegalMoveError,
    InterpreterError,
    LimitError,
    LoadError,
    NoSuchRoleError,
    ParseError,
    PlayoutsError,
    RealTimeGameError,
    RefusedError,
    SettingError,
    TooManyJointMovesError,
    UnknownFactError,
    UnknownMoveError,
)

__all__ = [
    "DEFAULT_GAME",
    "MAX_JOINT_MOVES",
    "MAX_THREADS",
    "Game",
    "Move",
    "Playout",
    "PlayoutReport",
    "RtGame",
    "RtState",
    "State",
    "Stream",
    "VectorEnv",
    "errors",
    "AdapterError",
    "EngineError",
    "Error",
    "ForeignMoveError",
    "ForeignStateError",
    "GdlError",
    "IllegalMoveError",
    "InterpreterError",
    "LimitError",
    "LoadError",
    "NoSuchRoleError",
    "ParseError",
    "PlayoutsError",
    "RealTimeGameError",
    "RefusedError",
    "SettingError",
    "TooManyJointMovesError",
    "UnknownFactError",
    "UnknownMoveError",
]
