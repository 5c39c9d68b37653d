"""Context-sensitive tasks (Delétang et al. 2023's level CS; Bhattamishra et al.'s
aⁿbⁿcⁿ, aⁿbⁿcⁿdⁿ and Shuffle-Dyck-k for k ≥ 2).

Need more than a stack (a tape or several counters): duplicate string, missing duplicate,
odds first, binary addition, binary multiplication, compute sqrt, bucket sort.
"""
