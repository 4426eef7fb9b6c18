from setuptools import setup

setup(name="fixdep", version="2.1.0", packages=["fixdep"], install_requires=["fixbase>=1.0"])
