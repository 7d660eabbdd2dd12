"""``python -m runtime.worker FD``: run the zygote on control socket FD."""

from runtime.worker._zygote import main

main()
