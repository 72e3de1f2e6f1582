"""Single-role GDL games as Gymnasium environments (``pip install gymnasium``).

>>> import ggpnet.gymnasium
>>> env = ggpnet.gymnasium.GdlEnv(path)    # doctest: +SKIP
>>> env = gymnasium.make("ggpnet/Gdl-v0", source=path)   # doctest: +SKIP

:class:`GdlEnv` takes a GDL or GDL-II game with one role (besides GDL-II's
``random``) that runs on the propnet (``AdapterError`` with ``kind="roles"``
for more roles: see :mod:`ggpnet.pettingzoo`).

- **actions**: ``Discrete(n)``, action ``a`` is ``game.actions(0)[a]``
  (:class:`ggpnet.VectorEnv`'s dense order);
- **observations**: ``{"observation": base propositions (int8, 0 or 1, in
  the order of game.bases), "action_mask": legal actions (int8)}``, the mask
  also in ``info["action_mask"]``; in GDL-II the role's percepts instead of
  the base propositions, as :mod:`ggpnet.pettingzoo` describes; sample a legal action with
  ``env.action_space.sample(mask=obs["action_mask"])``;
- **reward**: the role's goal (0 to 100) when the game terminates, 0 before;
  **truncated** after `max_steps` moves (the game's ``max_playout_depth`` by
  default);
- **illegal actions** raise ``IllegalMoveError``, or with
  ``illegal_action="random"`` become a uniformly random legal action drawn
  from the environment's ``np_random`` (Gymnasium's environment checker
  steps unmasked random actions, so it needs ``"random"``).
"""

from __future__ import annotations

import os
from typing import Any, Dict, Optional, Tuple, Union

import gymnasium
import numpy as np
from gymnasium import spaces

from ._adapt import Spec
from ._episode import Episode, dict_space, make_spec
from ._ggpnet import Game
from .errors import AdapterError

__all__ = ["GdlEnv", "ENV_ID"]

ENV_ID = "ggpnet/Gdl-v0"
"""The id :class:`GdlEnv` is registered under with Gymnasium on import:
``gymnasium.make(ENV_ID, source=path, ...)``."""


class GdlEnv(gymnasium.Env):
    """A single-role GDL game as a ``gymnasium.Env`` (see the module)."""

    metadata = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        source: Union[str, "os.PathLike[str]", Game],
        *,
        max_steps: Optional[int] = None,
        illegal_action: str = "raise",
        render_mode: Optional[str] = None,
        **load_options: Any,
    ) -> None:
        self.gdl_spec: Spec = make_spec(source, "auto", max_steps, load_options)
        """How the game is presented (actions, bases)."""
        if len(self.gdl_spec.players) != 1:
            raise AdapterError(
                f"a Gymnasium environment takes a game of one role, not {len(self.gdl_spec.players)} "
                "(ggpnet.pettingzoo takes games of several)",
                "roles",
            )
        self.game: Game = self.gdl_spec.game
        self.render_mode = render_mode
        self._episode = Episode(self.gdl_spec, illegal_action)
        self.observation_space = dict_space(
            self._episode.observation_sizes()[0], self.gdl_spec.num_actions
        )
        self.action_space = spaces.Discrete(self.gdl_spec.num_actions)

    def _view(self) -> Tuple[Dict[str, np.ndarray], Dict[str, Any]]:
        observation = self._episode.observe(0)
        return observation, {"action_mask": observation["action_mask"].copy()}

    def reset(
        self, *, seed: Optional[int] = None, options: Optional[dict] = None
    ) -> Tuple[Dict[str, np.ndarray], Dict[str, Any]]:
        """Starts a new game: (observation, info)."""
        super().reset(seed=seed)
        self._episode.reset(self.np_random)
        return self._view()

    def step(self, action: Any) -> Tuple[Dict[str, np.ndarray], float, bool, bool, Dict[str, Any]]:
        """Plays `action`: (observation, reward, terminated, truncated, info)."""
        episode = self._episode
        if episode.ended:
            raise AdapterError("the episode has ended: call reset()", "setting")
        episode.play({0: episode.action(0, action)})
        observation, info = self._view()
        return observation, float(episode.rewards()[0]), episode.terminated, episode.truncated, info

    def render(self) -> Optional[str]:  # type: ignore[override]
        """The state's facts (``render_mode="ansi"``)."""
        if self.render_mode == "ansi":
            return self._episode.render()
        return None


if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point=GdlEnv, disable_env_checker=True)
