"""The pure core: the GF(2) kernel, :class:`LinearLayout`, its builders, text views and hardware constants.

Nothing in this package imports ``mlir`` or any other layer of ``linear_layout``.
"""
