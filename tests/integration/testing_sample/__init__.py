"""A sample application and its tests, run through the beanpod.testing plugin by
pytester (tests/integration/test_testing_plugin.py, which writes shop_tests.py as test_shop.py);
not collected directly."""
