"""Statistics of LCR: Monte Carlo simulation and exact odds.

* :func:`simulate` — many games at once (vectorised with numpy), :class:`SimulationResult`;
* :func:`opening_odds`, :func:`win_probabilities`, :func:`odds_for_state` — who is favoured, exact where
  the game is small enough (:mod:`lcr_pi.stats.exact`), Monte Carlo with a stated error otherwise;
* :func:`choose_victims` — the one Wild robbing policy statistics assume (rob the richest).
"""

from lcr_pi.stats.odds import Odds, odds_for_state, opening_odds, prepare, win_probabilities
from lcr_pi.stats.policy import choose_victims
from lcr_pi.stats.simulate import SimulationResult, simulate, simulate_from, table_config

__all__ = [
    "Odds",
    "SimulationResult",
    "choose_victims",
    "odds_for_state",
    "opening_odds",
    "prepare",
    "simulate",
    "simulate_from",
    "table_config",
    "win_probabilities",
]
