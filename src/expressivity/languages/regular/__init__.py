"""Regular tasks (Delétang et al. 2023's level R; Bhattamishra et al. 2020's Tomita grammars).

Solvable by a finite automaton: parity check, even pairs, cycle navigation, modular
arithmetic (without brackets), Tomita 1–7.
"""
