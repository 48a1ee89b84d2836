module lockpick/tools/porcupine-bench

go 1.26.0

require github.com/anishathalye/porcupine v1.3.1
