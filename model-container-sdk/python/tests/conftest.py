import os
import sys

# the SDK is used from the checkout, not installed
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))
