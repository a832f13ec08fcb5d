# Data-mining flow sizes: "value cumulative-probability" (bytes, fraction).
# Greenberg et al., "VL2: A Scalable and Flexible Data Center Network",
# SIGCOMM 2009, Fig. 2 (flow size distribution), as digitised and distributed
# with Opera (TritonNetworking/opera-sim, Figure1_traffic/datamining.csv,
# commit ed471fed).  See README.md.
100 0
180 0.085
250 0.14
560 0.33
900 0.47
1100 0.55
1870 0.65
3160 0.7
10000 0.8
100001 0.874
400000 0.9
1850000 0.95
10000000 0.97
30000000 0.98
100000000 0.99
250000000 0.995
1000000000 1
