# ibfs — InfiniBand UD datagrams as files.
#
#   make            build build/ibfs (warnings are errors)
#   make deps       install every Debian package build, tests and bed need
#   make check      deps, build, unit tests on the host, end-to-end tests in
#                   the soft-RoCE test bed; last line "N passed, N failed"
#   make unit       unit tests only (no root, no VM)
#   make e2e        end-to-end tests only, in the test bed
#   make SANITIZE=address,undefined check

PKGS     := fuse3 libibverbs librdmacm inih
CC       ?= cc
CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter \
	    -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	    -D_GNU_SOURCE -Iinclude $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
LDLIBS   += $(shell pkg-config --libs $(PKGS) 2>/dev/null) -lcrypto -lpthread
ifneq ($(SANITIZE),)
CFLAGS   += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer
LDFLAGS  += -fsanitize=$(SANITIZE)
endif

B        := build
SRCS     := $(wildcard src/*.c)
OBJS     := $(SRCS:src/%.c=$(B)/obj/%.o)
LIBOBJS  := $(filter-out $(B)/obj/main.o,$(OBJS))
UNITS    := $(patsubst tests/unit/%.c,$(B)/tests/%,$(wildcard tests/unit/test_*.c))
TOOLS    := $(patsubst tests/tools/%.c,$(B)/tools/%,$(wildcard tests/tools/*.c))

.PHONY: all deps check unit e2e clean fmt tools
all: $(B)/ibfs tools

tools: $(TOOLS)

$(B)/obj/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c -o $@ $<

$(B)/ibfs: $(OBJS)
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Unit tests link every module but main; the linker keeps what they use.
$(B)/tests/%: tests/unit/%.c $(LIBOBJS) tests/unit/unit.h
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -Itests/unit $(LDFLAGS) -o $@ $< $(LIBOBJS) $(LDLIBS) -lcmocka

$(B)/tools/%: tests/tools/%.c $(LIBOBJS)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBOBJS) $(LDLIBS)

deps:
	scripts/deps.sh

unit: $(UNITS)
	scripts/check.sh --unit-only

e2e: all
	scripts/check.sh --e2e-only

check: deps
	$(MAKE) all $(UNITS)
	scripts/check.sh

fmt:
	clang-format -i src/*.c include/*.h tests/unit/*.c tests/unit/*.h tests/tools/*.c

clean:
	rm -rf $(B)/obj $(B)/tests $(B)/tools $(B)/ibfs

-include $(OBJS:.o=.d)
