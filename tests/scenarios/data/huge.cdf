# flow sizes in bytes, the last absurd
0 0
1000 0.5
1e30 1
