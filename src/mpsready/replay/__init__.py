"""``mpsready replay A B [--layer NAME]``: re-run the first diverging layer alone from the inputs a record saved
(``record --save-inputs``), on the CPU in float64 and on each device here, and say whether the divergence is one
op's or accumulated. Reads two run records; imports torch only when it runs (:mod:`.engine`)."""
