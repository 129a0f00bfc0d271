# Shared build rules of the examples: `make` builds build/$(APP) with perfcast regions and
# build/$(APP)-noregions with the regions compiled out (-DPERFCAST_DISABLE, for the overhead
# benchmark). Outside this repository point PERFCAST_DIR at `perfcast instrument --dir`.
MPICC ?= mpicc
# -Wno-unknown-pragmas: `#pragma perfcast` annotations are for the static analysis only.
CFLAGS ?= -O2 -g -Wall -Wextra -Wno-unknown-pragmas
PERFCAST_DIR ?= ../../src/perfcast/measure/c
LDLIBS ?= -lm

all: build/$(APP) build/$(APP)-noregions

build/$(APP): $(APP).c $(PERFCAST_DIR)/perfcast.c $(PERFCAST_DIR)/perfcast.h | build
	$(MPICC) $(CFLAGS) -I$(PERFCAST_DIR) -o $@ $(APP).c $(PERFCAST_DIR)/perfcast.c -ldl $(LDLIBS)

build/$(APP)-noregions: $(APP).c $(PERFCAST_DIR)/perfcast.h | build
	$(MPICC) $(CFLAGS) -DPERFCAST_DISABLE -I$(PERFCAST_DIR) -o $@ $(APP).c $(LDLIBS)

build:
	mkdir -p build

clean:
	rm -rf build

.PHONY: all clean
