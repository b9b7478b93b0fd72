{
  "targets": [
    {
      "target_name": "nereid_fil",
      "sources": ["fil.cc"],
      "cflags_cc": ["-O3", "-std=c++17", "-Wall", "-Wextra", "-ffp-contract=off", "-pthread"],
      "cflags_cc!": ["-fno-exceptions"],
      "ldflags": ["-pthread"]
    }
  ]
}
