"""GDL games as PettingZoo environments (``pip install pettingzoo``).

>>> import ggpnet.pettingzoo
>>> env = ggpnet.pettingzoo.env("games/connect_four.kif")            # doctest: +SKIP
>>> env = ggpnet.pettingzoo.parallel_env("games/connect_four.kif")   # doctest: +SKIP

:func:`env` makes an AEC environment (:class:`GdlAECEnv`), :func:`parallel_env`
a Parallel one (:class:`GdlParallelEnv`), of any GDL or GDL-II game that runs
on the propnet.

- **agents**: the roles' names; **actions**: ``Discrete(n)``, agent ``r``'s
  action ``a`` is ``game.actions(r)[a]`` (:class:`ggpnet.VectorEnv`'s dense
  order), ``n`` the most any role has;
- **observations**: ``{"observation": base propositions (int8, 0 or 1, in
  the order of game.bases), "action_mask": legal actions (int8)}``, as
  PettingZoo documents action masking; in GDL-II, whose state is hidden,
  ``"observation"`` is the agent's percepts instead: one entry per percept
  its role can receive (``game.possible_percepts(role)``), 1 for those
  received with the last joint move (all 0 at the start), so the spaces
  differ between agents; ``state()`` is the
  whole state (the base propositions) in both;
- **turns** (AEC): in a sequential game (the rule of :mod:`ggpnet._adapt`)
  the agent with the choice acts and the others play their one legal move;
  in a simultaneous game every agent acts in turn, and the joint move is
  played when the last has acted (the state does not change in between);
- **Parallel**: every live agent gives an action at every step (in a
  sequential game, the one legal move of those not to move: the mask shows it);
- **rewards**: each agent's goal (0 to 100) when the game ends, 0 before;
  **truncation** after `max_steps` joint moves (the game's
  ``max_playout_depth`` by default);
- **illegal actions** raise ``IllegalMoveError``, or with
  ``illegal_action="random"`` become a uniformly random legal action;
- **seeding**: ``reset(seed=...)`` seeds the generator the role ``random``
  (GDL-II's chance, not an agent) draws from (and illegal actions under ``"random"``).
"""

from __future__ import annotations

import os
from typing import Any, Dict, Optional, Tuple, Union

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv, ParallelEnv

from ._episode import Episode, dict_space, make_spec
from ._adapt import Spec
from ._ggpnet import Game

__all__ = ["env", "parallel_env", "GdlAECEnv", "GdlParallelEnv"]

Source = Union[str, "os.PathLike[str]", Game]


class _GdlEnv:
    """What the AEC and the Parallel environment share: the game, its
    agents and spaces, the episode, rendering and the state."""

    def _setup(
        self,
        source: Source,
        *,
        dynamics: str = "auto",
        max_steps: Optional[int] = None,
        illegal_action: str = "raise",
        render_mode: Optional[str] = None,
        **load_options: Any,
    ) -> None:
        self.gdl_spec: Spec = make_spec(source, dynamics, max_steps, load_options)
        """How the game is presented (players, actions, sequential or not)."""
        self.game: Game = self.gdl_spec.game
        self.render_mode = render_mode
        self.possible_agents = [self.gdl_spec.roles[r] for r in self.gdl_spec.players]
        self._number = {agent: p for p, agent in enumerate(self.possible_agents)}
        self._episode = Episode(self.gdl_spec, illegal_action)
        actions = self.gdl_spec.num_actions
        self.observation_spaces = {
            agent: dict_space(size, actions)
            for agent, size in zip(self.possible_agents, self._episode.observation_sizes())
        }
        self.action_spaces = {agent: spaces.Discrete(actions) for agent in self.possible_agents}
        self._rng = np.random.default_rng()
        self.agents = []

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    def render(self) -> Optional[str]:
        """The state's facts (``render_mode="ansi"``)."""
        if self.render_mode == "ansi":
            return self._episode.render()
        return None

    def state(self) -> np.ndarray:
        """The base propositions: the whole state (in GDL-II, hidden from the agents)."""
        return self.gdl_spec.observation(self._episode.node, np.zeros(len(self.gdl_spec.bases), dtype=np.int8))

    def close(self) -> None:
        pass


class GdlAECEnv(_GdlEnv, AECEnv):
    """A GDL game as a PettingZoo AEC environment (see the module)."""

    metadata = {"render_modes": ["ansi"], "name": "ggpnet_gdl_v0", "is_parallelizable": True}

    def __init__(self, source: Source, **options: Any) -> None:
        super().__init__()
        self._setup(source, **options)
        self._pending: Dict[int, int] = {}

    def reset(self, seed: Optional[int] = None, options: Optional[dict] = None) -> None:
        """Starts a new game (`seed` seeds the environment's draws)."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._episode.reset(self._rng)
        self._pending = {}
        self.agents = self.possible_agents[:]
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos = {agent: {} for agent in self.agents}
        self.agent_selection = self._next_agent()

    def _next_agent(self) -> str:
        episode = self._episode
        if episode.ended:
            return self.agents[0]
        if episode.simultaneous:
            waiting = [p for p in range(len(self.possible_agents)) if p not in self._pending]
            return self.possible_agents[waiting[0]]
        return self.possible_agents[episode.node.player]

    def observe(self, agent: str) -> Dict[str, np.ndarray]:
        """The base propositions and the agent's action mask (all zeros when
        it is not the agent's turn)."""
        return self._episode.observe(self._number[agent])

    def step(self, action: Any) -> None:
        """The selected agent's action (``None`` once it is done)."""
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        episode = self._episode
        player = self._number[agent]
        self._cumulative_rewards[agent] = 0.0
        self._pending[player] = episode.action(player, action)
        if episode.simultaneous and len(self._pending) < len(self.possible_agents):
            self._clear_rewards()
            self.agent_selection = self._next_agent()
            return
        episode.play(self._pending)
        self._pending = {}
        rewards = episode.rewards()
        for p, name in enumerate(self.possible_agents):
            self.rewards[name] = rewards[p]
            self.terminations[name] = episode.terminated
            self.truncations[name] = episode.truncated
        self._accumulate_rewards()
        self.agent_selection = self._next_agent()



class GdlParallelEnv(_GdlEnv, ParallelEnv):
    """A GDL game as a PettingZoo Parallel environment (see the module)."""

    metadata = {"render_modes": ["ansi"], "name": "ggpnet_gdl_v0"}

    def __init__(self, source: Source, **options: Any) -> None:
        self._setup(source, **options)

    def _observations(self) -> Dict[str, Dict[str, np.ndarray]]:
        return {a: self._episode.observe(self._number[a], mask_all=True) for a in self.agents}

    def reset(
        self, seed: Optional[int] = None, options: Optional[dict] = None
    ) -> Tuple[Dict[str, Dict[str, np.ndarray]], Dict[str, dict]]:
        """Starts a new game: (observations, infos)."""
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._episode.reset(self._rng)
        self.agents = self.possible_agents[:]
        return self._observations(), {agent: {} for agent in self.agents}

    def step(self, actions: Dict[str, Any]) -> Tuple[dict, dict, dict, dict, dict]:
        """Plays one joint move: `actions` maps every live agent to its
        action (an agent with one legal move may be left out)."""
        episode = self._episode
        chosen = {}
        for agent in self.agents:
            player = self._number[agent]
            if agent in actions:
                chosen[player] = episode.action(player, actions[agent])
            elif len(episode.legal(player)) != 1:
                chosen[player] = episode.action(player, None)  # raises, or draws under "random"
        episode.play(chosen)
        rewards = episode.rewards()
        stepped = self.agents
        observations = self._observations()
        result = (
            observations,
            {a: rewards[self._number[a]] for a in stepped},
            {a: episode.terminated for a in stepped},
            {a: episode.truncated for a in stepped},
            {a: {} for a in stepped},
        )
        if episode.ended:
            self.agents = []
        return result



def env(source: Source, **options: Any) -> GdlAECEnv:
    """An AEC environment of the GDL game at `source` (a path, the rules, or a
    :class:`ggpnet.Game`); options: ``dynamics``, ``max_steps``,
    ``illegal_action``, ``render_mode``, and :meth:`ggpnet.Game.load`'s."""
    return GdlAECEnv(source, **options)


def parallel_env(source: Source, **options: Any) -> GdlParallelEnv:
    """A Parallel environment of the GDL game at `source` (options as :func:`env`)."""
    return GdlParallelEnv(source, **options)
