{
  "targets": [
    {
      "target_name": "nereid_shm",
      "sources": ["shm.c"],
      "cflags": ["-O2", "-Wall", "-Wextra"],
      "libraries": ["-lrt"]
    }
  ]
}
