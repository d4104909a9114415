//! Linux backend: evdev in, uinput out, one epoll loop. (Being built: see issue 2.)
