"""The lab, beside the product (which never imports it): the offline harness (``quality``), benchmarks that
print figures (``bench``), the fitting of the learned parts (``fitting``, ``relevance``), the console's demo
data and screenshots (``console``), and their commands under ``tool-selector lab`` (``cli``)."""
