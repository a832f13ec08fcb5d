# interarrival times in ps: almost all 0
0 0
0 0.99999999
1 1
